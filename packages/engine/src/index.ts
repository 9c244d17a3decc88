// Public API of @stepforge/engine.
export {};
