/** Every Task state's `Resource` in a definition, with the JSON path of the state (the interpreter's walker). */
export { taskResources as collectTaskResources } from '../interpreter/executeStateMachine.js';
