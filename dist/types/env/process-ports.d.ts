/**
 * Which processes listen on which TCP ports, from /proc (Linux): LISTEN sockets in /proc/net/tcp and
 * /proc/net/tcp6 give socket inodes by port, and /proc/<pid>/fd/* links (`socket:[inode]`) give the
 * processes that hold them. Processes are found by the sockets they own, never by name.
 */
export interface Listener {
    port: number;
    pid: number;
    /** /proc/<pid>/stat starttime: guards against the pid being reused between finding and signalling. */
    startTime: string;
    command: string;
}
export interface PortScan {
    listeners: Listener[];
    /** Ports with a LISTEN socket whose process we cannot see (another user's, another pid namespace). */
    unknown: number[];
    /** Why nothing could be scanned (not Linux), when so. */
    unsupported?: string;
}
/** LISTEN sockets on the given ports: inode → port. Reads /proc/net/tcp and tcp6 (a missing one is skipped). */
export declare function listeningInodes(ports: Iterable<number>, procRoot?: string): Map<string, number>;
export declare function procStartTime(pid: number, procRoot?: string): string | undefined;
/** The processes holding LISTEN sockets on `ports`. */
export declare function findListeners(ports: Iterable<number>, procRoot?: string): PortScan;
export interface StoppedProcess {
    pid: number;
    ports: number[];
    command: string;
    /** How it ended: it exited on SIGTERM, needed SIGKILL, was gone already, or could not be signalled. */
    outcome: 'terminated' | 'killed' | 'gone' | 'failed';
    error?: string;
}
export interface StopResult {
    stopped: StoppedProcess[];
    unknown: number[];
    unsupported?: string;
}
/**
 * Stops every process listening on `ports`: SIGTERM, then SIGKILL after `graceMs` for those still alive.
 * Never signals this process itself. A process that exits by itself in between is "gone".
 */
export declare function stopListeners(ports: Iterable<number>, opts?: {
    graceMs?: number;
    pollMs?: number;
}): Promise<StopResult>;
