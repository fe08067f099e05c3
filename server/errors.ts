/** Typed errors: services throw these, the one error middleware (http/error.middleware.ts) maps them to status + {detail}. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

export class BadRequestError extends HttpError {
  constructor(detail: string) {
    super(400, detail);
  }
}

export class UnauthorizedError extends HttpError {
  constructor(detail = "Not authenticated: sign in again") {
    super(401, detail);
  }
}

export class ForbiddenError extends HttpError {
  constructor(detail: string) {
    super(403, detail);
  }
}

/** Used for a missing id AND a denied id alike, so the two cannot be told apart (docs/decisions/0001-access-rules.md). */
export class NotFoundError extends HttpError {
  constructor(detail = "Not found") {
    super(404, detail);
  }
}

export class ConflictError extends HttpError {
  constructor(detail: string) {
    super(409, detail);
  }
}

export interface FieldError {
  field: string;
  message: string;
}

export class ValidationError extends HttpError {
  constructor(readonly errors: FieldError[]) {
    super(422, `Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join("; ")}`, { errors });
  }
}

export class TooManyRequestsError extends HttpError {
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, detail);
  }
}

export class ServiceUnavailableError extends HttpError {
  /** retryAfterSeconds: sent as Retry-After, when the server can tell when to come back. */
  constructor(
    detail: string,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(503, detail);
  }
}

/** How long a client is told to wait while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** A request that needed the database while it was unreachable (error.middleware.ts maps driver errors to this). */
export class DatabaseUnreachableError extends ServiceUnavailableError {
  constructor() {
    super("The database is unreachable; try again shortly", DATABASE_RETRY_AFTER_SECONDS);
  }
}
