import { LeasefenceError } from '../core/errors';
/**
 * Per-slot git worktrees: slot i gets branch `agent/<i>` checked out at `../wt-agent-<i>` next to the
 * repository (`git worktree add -B agent/<i> ../wt-agent-<i> <base-ref>`).
 */
export declare class WorktreeError extends LeasefenceError {
    constructor(message: string);
}
export interface GitResult {
    code: number;
    stdout: string;
    stderr: string;
}
export declare function git(cwd: string, args: string[], timeoutMs?: number): Promise<GitResult>;
export interface WorktreeLayout {
    /** The repository's top level directory. */
    repo: string;
    /** The slot's worktree directory. */
    path: string;
    branch: string;
}
export declare function validateBaseRef(ref: string): string;
/** The repository top level for `dir` (the repository at cwd, or --repo). */
export declare function repoTopLevel(dir: string): Promise<string>;
/** Where slot `slot`'s worktree goes: ../wt-agent-<slot> relative to the repository's top level. */
export declare function worktreeLayout(repoTop: string, slot: number): WorktreeLayout;
interface WorktreeEntry {
    path: string;
    branch?: string;
    prunable: boolean;
    locked: boolean;
}
export declare function listWorktrees(repo: string): Promise<WorktreeEntry[]>;
export interface WorktreeResult {
    path: string;
    branch: string;
    repo: string;
    /** created: added now; kept: already there and reused; recreated: a leftover replaced by a fresh one. */
    action: 'created' | 'kept' | 'recreated';
    head: string;
}
/**
 * Makes slot's worktree. `reuse`: an existing registered worktree of the slot's branch is kept as it is
 * (the same holder acquiring again); otherwise a leftover is removed and the worktree made afresh from
 * base-ref. A directory in the way that is not a worktree of this repository is refused, never deleted.
 */
export declare function ensureWorktree(layout: WorktreeLayout, baseRef: string, opts?: {
    reuse?: boolean;
}): Promise<WorktreeResult>;
export interface WorktreeRemoval {
    path: string;
    /** removed: it was there and is gone now; absent: nothing was there. */
    action: 'removed' | 'absent';
}
/**
 * `git worktree remove --force` and `git worktree prune`. A worktree already gone is fine. The branch
 * `agent/<slot>` is kept: commits made on it survive (the next acquire resets it with -B).
 */
export declare function removeWorktree(layout: WorktreeLayout): Promise<WorktreeRemoval>;
/**
 * Serialises worktree changes in one repository across processes. Concurrent `git worktree add` and
 * `git worktree prune` race in .git/worktrees (a prune can delete an entry another add is still
 * writing: "failed to read .git/worktrees/…/commondir"), so parallel agents sharing a repository take
 * turns. The lock is a file created exclusively in the git common dir; one left by a dead process (or
 * older than two minutes) is broken.
 */
export declare function withRepoLock<T>(repo: string, fn: () => Promise<T>, timeoutMs?: number): Promise<T>;
export {};
