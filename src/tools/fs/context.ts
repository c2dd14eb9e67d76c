/** What a file tool call is given besides the workspace: the call's context and the limits of tools.fs. */
import type { ToolContext } from '../../engine/index.js';
import type { FsConfig } from './config.js';

/** What the file tools use of a call's context. */
export type FsContext = Pick<ToolContext, 'signal' | 'emit'>;

/** The limits of tools.fs a file tool call needs. */
export type FsLimits = Pick<FsConfig, 'max_read_bytes' | 'max_write_bytes'>;
