/**
 * A build that stopped on purpose (bad source, guard refusal): the message
 * says why. A module of its own, so that a command which has the build run
 * in a process of its own (npm start: build/prepare-dist.ts) can tell a
 * refusal without loading the build's code.
 */
export class BuildRefused extends Error {}
