/** Why a file operation failed, in words, for an error code a user can cause (`overrides` where the context says it better). */
export function errnoReason(e: unknown, overrides: Readonly<Record<string, string>> = {}): string {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  return overrides[code] ?? REASONS[code] ?? (e as Error).message;
}

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
};
