/** Every Task state's `Resource` in a definition, with the JSON path of the state (the interpreter's walker). */
export { taskResources as collectTaskResources } from '../interpreter/executeStateMachine.js';
/** Marks a parsed stored definition as checked when it was stored (the interpreter then does not check it again). */
export { markValidDefinition } from '../interpreter/validateDefinition.js';
