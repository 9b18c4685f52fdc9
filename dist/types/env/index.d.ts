/** Environment leases (issue 6): the library behind `leasefence env` and the action's env-* inputs. */
export * from './environment';
export * from './ports';
export * from './env-file';
export * from './schema-clone';
export { CLONE_FUNCTION, INSTALL_CLONE_FUNCTION_SQL } from './schema-clone-sql';
export { ensureWorktree, listWorktrees, removeWorktree, repoTopLevel, validateBaseRef, worktreeLayout, WorktreeError, type WorktreeLayout, type WorktreeRemoval, type WorktreeResult } from './worktree';
export * from './process-ports';
export * from './ready';
