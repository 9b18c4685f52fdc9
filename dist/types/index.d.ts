/**
 * leasefence as a library. The same bundle also carries the CLI and the action's entry points
 * (dist/cli.js, dist/main.js, dist/post.js, dist/publish.js, dist/heartbeat.js call `entry`).
 */
export * from './core/errors';
export * from './core/duration';
export * from './core/options';
export * from './core/resource-id';
export * from './core/time';
export * from './core/connection';
export * from './core/lease-store';
export * from './core/heartbeat';
export * from './core/acquire';
export * from './core/publish';
export * from './core/local-state';
export * from './core/log';
export * from './core/queue';
export * from './core/slots';
export * from './core/operations';
export * from './core/liveness';
export * from './core/acquisition';
export * from './core/modes';
export * from './core/dry-run';
export * from './env/index';
export { runCli } from './cli/index';
export { entry, type EntryMode } from './entry';
