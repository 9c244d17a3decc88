import type { EmbeddedStack, OpenStackOptions } from './EmbeddedStack.js';
import type { EmbeddedRunService } from './RunService.js';
import { isLostConnection } from './isLostConnection.js';

/** Where a session says that it took the stack over (a command's stderr): any object with `err`. */
export interface SessionNotes {
  err(text: string): void;
}

/** What a command works with: the project's stack and a RunService on it. */
export interface OpenedStack {
  readonly stack: EmbeddedStack;
  readonly service: EmbeddedRunService;
}

/**
 * How many times a command opens the stack again after losing the owner it was connected to.
 * Many commands started at once hand the stack on from one to the next as each ends, so one
 * command can see many owners go; each time it finds its run as the last one left it.
 */
const MAX_TAKEOVERS = 100;

/**
 * A command's hold on the project's embedded stack, which can outlive the process it connected
 * to. A command connected to another process's stack (a `run` started while another `run` was
 * waiting) loses it when that process ends first. `untilDone` then opens the stack again: this
 * process (or another waiting one) becomes the owner, which resumes the unfinished executions
 * from their last checkpoints, and the command goes on following its run there.
 */
export class StackSession {
  private constructor(
    private readonly options: OpenStackOptions,
    private opened: OpenedStack,
  ) {}

  /** Opens the stack (lazily loaded: commands that never run anything do not pay for it). */
  static async open(options: OpenStackOptions): Promise<StackSession> {
    return new StackSession(options, await openService(options));
  }

  get stack(): EmbeddedStack {
    return this.opened.stack;
  }

  get service(): EmbeddedRunService {
    return this.opened.service;
  }

  /**
   * Runs `f` (following a run to its end) and, when the owner this process was connected to
   * goes away under it, takes the stack over and runs `f` again with `again` set. It says so on
   * stderr unless `quiet` (a `runs cancel` whose owner was the `run` of the run it stopped, which
   * ends because of it, expects to lose it).
   */
  async untilDone<T>(
    io: SessionNotes,
    f: (opened: OpenedStack, again: boolean) => Promise<T>,
    options: { readonly quiet?: boolean } = {},
  ): Promise<T> {
    for (let takeovers = 0; ; takeovers++) {
      try {
        return await f(this.opened, takeovers > 0);
      } catch (e) {
        if (this.opened.stack.owner || !isLostConnection(e) || takeovers >= MAX_TAKEOVERS) throw e;
        if (!options.quiet) {
          io.err(
            this.options.resume === false
              ? `note: the stepforge process that held this project's stack ended; this one opens it in its place (and resumes nothing)\n`
              : `note: the stepforge process that held this project's stack ended; this one takes it over and carries on (a run that had started resumes from its last checkpoint)\n`,
          );
        }
        await this.opened.stack.close();
        this.opened = await openService(this.options);
      }
    }
  }

  close(): Promise<void> {
    return this.opened.stack.close();
  }
}

/**
 * Opens the embedded stack and a RunService on it. Loaded lazily so commands that never touch the
 * stack (`graph`, `compile`) do not pay for the engine, the emulators and the AWS SDK.
 */
export async function openService(options: OpenStackOptions): Promise<OpenedStack> {
  const [{ openStack }, { EmbeddedRunService }] = await Promise.all([import('./EmbeddedStack.js'), import('./RunService.js')]);
  const stack = await openStack(options);
  return { stack, service: new EmbeddedRunService(stack, options.projectDir, options.env ?? process.env) };
}
