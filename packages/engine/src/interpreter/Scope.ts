// Variable scopes: a Parallel branch or Map iteration gets a child scope that reads the outer
// variables but writes only its own (AWS: results leave a branch through its output).

/** A variable scope; lookups fall through to the parent, writes stay local. */
export class Scope {
  private readonly own: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  private snapshot?: Readonly<Record<string, unknown>>;
  constructor(readonly parent?: Scope) {}

  /** True when the variable is defined here or in an enclosing scope. */
  has(name: string): boolean {
    for (let s: Scope | undefined = this; s; s = s.parent) if (name in s.own) return true;
    return false;
  }

  /** The variable's value (undefined when not defined). */
  get(name: string): unknown {
    for (let s: Scope | undefined = this; s; s = s.parent) if (name in s.own) return s.own[name];
    return undefined;
  }

  /** Writes variables into this scope. */
  assign(values: Record<string, unknown>): void {
    for (const k of Object.keys(values)) this.own[k] = values[k];
    this.snapshot = undefined;
  }

  /** All visible variables, inner ones shadowing outer ones (a fresh plain object). */
  flatten(): Record<string, unknown> {
    const out: Record<string, unknown> = this.parent ? this.parent.flatten() : {};
    for (const k of Object.keys(this.own)) out[k] = this.own[k];
    return out;
  }

  /**
   * Only this scope's own variables (what a checkpoint stores for the top level), frozen and shared
   * until the next assign: a checkpoint is taken at every top-level transition, and most assign nothing.
   */
  ownValues(): Readonly<Record<string, unknown>> {
    return (this.snapshot ??= Object.freeze({ ...this.own }));
  }
}
