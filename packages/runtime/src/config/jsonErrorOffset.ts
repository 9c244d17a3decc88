// The scan lives in the contract, where the compiler (which loads `.json` chains) can reach it too.
export { jsonErrorOffset } from '@stepforge/contract';
