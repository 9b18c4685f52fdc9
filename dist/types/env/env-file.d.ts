/**
 * The environment file of a slot and the per-slot DATABASE_URL.
 */
/**
 * The slot's DATABASE_URL: the given URL with `options=-c search_path=<schema>` added to its query,
 * percent-encoded (`options=-c%20search_path%3Dagent_0`) so that both libpq (psql, most drivers) and
 * node-postgres read it; `+` would not do, libpq does not decode it to a space. An `options` parameter
 * already in the URL is kept and the search_path appended to it. Everything else is left byte for byte.
 */
export declare function withSearchPath(url: string, schema: string): string;
/** The URL without its password, for logs and lease metadata. */
export declare function redactUrl(url: string): string;
/** Quotes a value for a KEY=value line that both `sh` (`set -a; . file`) and dotenv read the same. */
export declare function envValue(value: string): string;
export declare function formatEnvFile(vars: Record<string, string>): string;
/** Writes the file atomically (temp file + rename), mode 0600: it may carry a database password. */
export declare function writeEnvFile(path: string, vars: Record<string, string>): string;
/** Reads KEY=value lines as written by formatEnvFile (single-quoted values unquoted). */
export declare function parseEnvFile(text: string): Record<string, string>;
