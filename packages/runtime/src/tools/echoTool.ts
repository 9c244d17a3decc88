import { RuntimeError } from '../errors/RuntimeError.js';
import type { ToolDefinition } from './ToolDefinition.js';

/** The longest `q` Kortecx's bundled echo accepts. */
const MAX_ECHO_CHARS = 4096;

/**
 * `echo`: returns its `q` argument unchanged. Kortecx bundles this tool (`mcp-echo/echo@1`, one
 * required string parameter `q`, no other) and its chains grant it as `@echo`, the leaf of that id;
 * here it is a built-in, so those chains run as written, offline included. It reaches nothing.
 */
export function echoTool(): ToolDefinition {
  return {
    name: 'echo',
    description: 'Return the text given as q, unchanged.',
    inputSchema: {
      type: 'object',
      properties: { q: { type: 'string', maxLength: MAX_ECHO_CHARS, description: 'the text to echo' } },
      required: ['q'],
      additionalProperties: false,
    },
    sideEffect: false,
    async run(args) {
      const extra = Object.keys(args).filter((k) => k !== 'q');
      if (typeof args.q !== 'string' || extra.length > 0)
        throw new RuntimeError(
          'InvalidInput',
          `echo takes one argument, q (a string)${extra.length > 0 ? `; got also ${extra.join(', ')}` : `; got q = ${JSON.stringify(args.q ?? null)}`}`,
        );
      if (args.q.length > MAX_ECHO_CHARS)
        throw new RuntimeError('InvalidInput', `echo: q is ${args.q.length} characters; at most ${MAX_ECHO_CHARS}`);
      return args.q;
    },
  };
}
