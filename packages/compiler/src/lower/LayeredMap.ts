// A map whose child layers see their parent's entries without copying them: a Parallel branch or
// Map iteration reads the enclosing scope's step values but its own writes must not leak out, and
// copying the whole environment per branch made lowering quadratic in the number of steps.

/** A string-keyed map layered over an optional parent; writes go to this layer only. */
export class LayeredMap<V> {
  /** This layer's entries, made on the first write (many layers are never written). */
  private own: Map<string, V> | undefined;

  constructor(private readonly parent?: LayeredMap<V>) {}

  /** A new layer over this one. */
  child(): LayeredMap<V> {
    return new LayeredMap(this);
  }

  get(key: string): V | undefined {
    for (let layer: LayeredMap<V> | undefined = this; layer !== undefined; layer = layer.parent) {
      const v = layer.own?.get(key);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  set(key: string, value: V): void {
    (this.own ??= new Map()).set(key, value);
  }
}
