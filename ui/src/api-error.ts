/** The error type of the API module. */

/** An error answer of the API (google.rpc.Status), or a network failure (`httpStatus` 0). */
export class ApiError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
