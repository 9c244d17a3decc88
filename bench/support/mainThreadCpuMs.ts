// CPU time of the process's main thread alone, so a benchmark can split process.cpuUsage() (every
// thread) into the engine-and-handlers thread and the rest (the dynalite worker, V8's background
// compiler and GC helpers). Linux only: elsewhere it returns undefined and the split is not printed.
import { readFileSync } from 'node:fs';

/** Milliseconds of user + system CPU the main thread has used, or undefined without /proc. */
export function mainThreadCpuMs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th, in clock
    // ticks (USER_HZ, 100 on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}
