/**
 * The heartbeat daemon: a detached process started by main (stdio ignored, so the runner does not wait
 * for it at the end of the step), stopped by post with SIGTERM. It keeps the lease alive with core's
 * Heartbeat and records what happened in the state directory:
 *   heartbeat.json  status (ready, renewals, failures, lost), rewritten atomically on every change
 *   heartbeat.log   one line per event
 *   lost            the lost marker (core/local-state) that makes every later publish refuse at once
 * It exits by itself when the lease is lost, or when max-hold has passed (then it releases the lease).
 */
export declare function runHeartbeatDaemon(configPath: string | undefined): Promise<void>;
