/**
 * Liveness-aware takeover: a lease whose holder's GitHub run attempt has completed (or been cancelled)
 * is stale even before it expires. Only a definite answer from the API counts: any error, rate limit or
 * missing metadata means "unknown", and unknown never justifies a takeover.
 */
export type RunLiveness = {
    state: 'over';
    status: string;
    conclusion: string | null;
    url?: string;
} | {
    state: 'running';
    status: string;
} | {
    state: 'unknown';
    reason: string;
};
export interface LivenessOptions {
    token: string;
    /** GitHub API base URL (GITHUB_API_URL; a local fake in tests). */
    apiUrl?: string;
}
/** Holder metadata fields the action stores in the lease (see action/main.ts). */
export interface RunIdentity {
    repository?: string;
    runId?: string;
    runAttempt?: string;
}
export declare function holderRunLiveness(meta: RunIdentity, opts: LivenessOptions): Promise<RunLiveness>;
