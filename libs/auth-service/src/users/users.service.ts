import argon2 from 'argon2';
import type { DataSource, Repository } from 'typeorm';
import { AppError, errors } from '@trading/errors';
import { UserEntity, type User } from './user.entity';

export interface NewUser {
  id?: string;
  email: string;
  password: string;
  firstName: string;
  lastName: string;
}

export class UsersService {
  private readonly users: Repository<User>;
  constructor(dataSource: DataSource) {
    this.users = dataSource.getRepository(UserEntity);
  }

  async create(input: NewUser): Promise<User> {
    const email = normaliseEmail(input.email);
    if (await this.users.existsBy({ email }))
      throw new AppError('CONFLICT', `A user with e-mail ${email} already exists`, { field: 'email' });
    const passwordHash = await argon2.hash(input.password, { type: argon2.argon2id });
    return this.users.save(this.users.create({ id: input.id, email, passwordHash, firstName: input.firstName, lastName: input.lastName }));
  }

  findByEmail(email: string): Promise<User | null> {
    return this.users.findOneBy({ email: normaliseEmail(email) });
  }

  findById(id: string): Promise<User | null> {
    return /^[0-9a-f-]{36}$/i.test(id) ? this.users.findOneBy({ id }) : Promise.resolve(null);
  }

  /** Users by e-mail, for the service team (a page at a time; `after`: the last e-mail of the previous page). */
  list(options: { limit: number; after?: string }): Promise<User[]> {
    const query = this.users.createQueryBuilder('u').orderBy('u.email', 'ASC').limit(options.limit);
    if (options.after) query.where('u.email > :after', { after: options.after });
    return query.getMany();
  }

  async requireByEmail(email: string): Promise<User> {
    const user = await this.findByEmail(email);
    if (!user) throw errors.notFound('User', 'email');
    return user;
  }

  /** Verifies a password; argon2 compares in constant time. */
  async verifyPassword(email: string, password: string): Promise<User | null> {
    const user = await this.findByEmail(email);
    if (!user) {
      await argon2.hash(password); // same work either way, so timing does not reveal which e-mails exist
      return null;
    }
    return (await argon2.verify(user.passwordHash, password)) ? user : null;
  }
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/** The one password rule, wherever a password is set (the admin API's new users, password reset). */
export const PASSWORD_RULES = { min: 12, max: 200 } as const;
export function passwordProblem(password: string): 'too-short' | 'too-long' | undefined {
  const { length } = password;
  return length < PASSWORD_RULES.min ? 'too-short' : length > PASSWORD_RULES.max ? 'too-long' : undefined;
}

/** The stored form of a new password (argon2id, as `create`). */
export const hashPassword = (password: string) => argon2.hash(password, { type: argon2.argon2id });
