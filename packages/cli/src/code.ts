// The `stepforge` package entry for workflows written in code: Kortyx's defineWorkflow and the
// agent SDK's builders, as a user's module imports them (`import { defineWorkflow } from "stepforge"`).
export {
  defineWorkflow, validateWorkflow, useWorkflow, workflow, parallel, stateGraph, agentNode, agent, END,
  type WorkflowDefinition, type NodeResult, type NodeFn, type Agent, type StateGraph,
} from '@stepforge/compiler';
