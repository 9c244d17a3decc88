// The `stepforge` package entry for workflows written in code: Kortyx's defineWorkflow and the
// agent SDK's builders, as a user's module imports them (`import { defineWorkflow } from "stepforge"`).
import { setCodeRunner } from '@stepforge/compiler';

export {
  defineWorkflow,
  validateWorkflow,
  useWorkflow,
  workflow,
  parallel,
  stateGraph,
  agentNode,
  agent,
  END,
  type WorkflowDefinition,
  type NodeResult,
  type NodeFn,
  type Agent,
  type StateGraph,
} from '@stepforge/compiler';

// `.run()` starts the workflow on the embedded stack. The stack is loaded on the first run only:
// modules the CLI compiles import this entry too, and must stay quick to load.
setCodeRunner((workflow, input, options) => import('@stepforge/embedded').then((m) => m.runCodeWorkflow(workflow, input, options)));
