import { AppError } from '@trading/errors';

export interface Problem {
  field: string;
  message: string;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

/** A registration or promotion that cannot be accepted: every problem, by field. */
export class RegistrationError extends AppError {
  constructor(readonly problems: Problem[]) {
    super(
      'UNPROCESSABLE',
      `The registration has ${problems.length} problem(s): ${problems.map((p) => `${p.field} ${p.message}`).join('; ')} (every field, by its JSON key: tools/admin/registration.example.json)`,
      {
        field: problems[0]?.field,
        details: { problems },
      },
    );
  }
}
