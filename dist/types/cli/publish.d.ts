import { Command } from 'commander';
export declare function publishCommand(): Command;
