/** A start that failed for a reason the operator can act on: printed as it is, without a stack trace. */
export class StartError extends Error {
  override name = 'StartError';
}
