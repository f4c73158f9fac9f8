// The name rule for topics, consumer groups and consumer instances: Kafka's topic name rule
// (1–249 characters from A–Z a–z 0–9 . _ -, not '.' or '..'), applied to groups and instances
// as well, since they become path segments and store keys.

const NAME = /^[A-Za-z0-9._-]{1,249}$/;

/** True when `name` is one that can be created. */
export function isValidName(name: unknown): name is string {
  return typeof name === 'string' && NAME.test(name) && name !== '.' && name !== '..';
}
