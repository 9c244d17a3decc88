// The check lives in the contract (the run service applies it on every platform); the compiler's API keeps the name.
export { applyInputSchema } from '@stepforge/contract';
