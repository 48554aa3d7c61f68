// Errors a service raises for the caller's input; tools turn them into tool errors the model can act on.
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly kind: 'not_found' | 'invalid' | 'conflict',
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string, id: number) =>
  new ServiceError('not_found', `No ${what} with id ${id} in your company.`);
