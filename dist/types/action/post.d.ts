/**
 * The post step (post-if: always()): stop the heartbeat, release the lease if this job still holds it,
 * summarise. It never fails the job over the lease: a lease taken over is reported, not an error.
 */
export declare function runPost(): Promise<void>;
