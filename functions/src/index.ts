// Public API of @stepforge/functions.
export {};
