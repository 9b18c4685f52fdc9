export type EntryMode = 'cli' | 'main' | 'post' | 'publish' | 'heartbeat';
/** One bundle, several entry points: the small files in dist/ call this with their mode. */
export declare function entry(mode: EntryMode): Promise<void>;
