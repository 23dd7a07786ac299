/** A setting that stops start-up; its French message names the variable at fault. */
export class ConfigError extends Error {}
