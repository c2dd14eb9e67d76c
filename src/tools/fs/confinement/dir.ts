/**
 * Directory descriptors: the file tools' only way to touch the workspace.
 *
 * A tool caller can change the workspace while a tool works (run_command can
 * rename a directory and put a symlink to /etc in its place between any two
 * system calls). So no privileged operation follows a path: a directory is
 * opened once with O_DIRECTORY|O_NOFOLLOW, relative to the descriptor of its
 * parent, and everything inside it (open, create, mkdir, rename, link, unlink,
 * lstat, readdir) goes through that descriptor. Node has no openat(); on Linux
 * `/proc/self/fd/<fd>/<name>` is the same thing: the kernel starts from the
 * directory the descriptor holds, whatever has become of the path it was
 * opened by, and a single final component with O_NOFOLLOW is never followed.
 * Ownership is changed with fchown on an open descriptor, never by path.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** An open directory. `close()` is a no-op for the workspace root, which stays open while a plugin uses it. */
export interface Dir {
  readonly fd: number;
  readonly handle: FileHandle;
  close(): Promise<void>;
}

/** The entry `name` (one component, no "/") of the directory open as `fd`: Node's openat(). */
export const at = (fd: number, name: string): string => `/proc/self/fd/${fd}/${name}`;

/** The directory open as `fd` itself (readdir through it reads that directory, not a path). */
export const self = (fd: number): string => `/proc/self/fd/${fd}`;

/** O_NOFOLLOW + O_DIRECTORY: a symlink or anything but a directory is refused (ELOOP/ENOTDIR). */
export const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Open the subdirectory `name` of `parent`, never following a symlink. */
export async function openChild(parent: Dir, name: string): Promise<Dir> {
  const handle = await open(at(parent.fd, name), DIR_FLAGS);
  return { fd: handle.fd, handle, close: () => handle.close() };
}

/** Open a directory by an absolute path the operator configured (the workspace root). */
export async function openRootDir(path: string): Promise<Dir> {
  const handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
  return { fd: handle.fd, handle, close: async () => {} };
}

/** Was this error a directory that is not one any more (a symlink or a file now)? */
export const notADirectory = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOTDIR' || code === 'ELOOP';
};
