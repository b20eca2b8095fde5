// The REST calls the console makes (what GraphQL does not carry: report uploads). A 401 ends the
// session; any other error is thrown as the problem the service answered.
import { fromProblem, type ApiError, type Problem } from "./api-error.ts";
import { signOut } from "./session.ts";

export class ApiRequestError extends Error {
  constructor(readonly apiError: ApiError) {
    super(apiError.detail ?? apiError.title);
  }
}

export async function restRequest<T>(
  token: string,
  method: string,
  path: string,
  init: { body?: BodyInit; headers?: Record<string, string> } = {},
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      body: init.body,
      headers: { ...init.headers, authorization: `Bearer ${token}` },
    });
  } catch (err) {
    throw new ApiRequestError({ title: "The service could not be reached", detail: (err as Error).message });
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (response.ok) return body as T;
  const error = fromProblem((body as Problem | undefined) ?? { detail: text }, response.status);
  if (response.status === 401) signOut(error.detail ?? error.title);
  throw new ApiRequestError(error);
}
