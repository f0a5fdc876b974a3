import { EntitySchema } from 'typeorm';

export interface User {
  id: string;
  email: string;
  passwordHash: string;
  firstName: string;
  lastName: string;
  createdAt: Date;
}

export const UserEntity = new EntitySchema<User>({
  name: 'User',
  tableName: 'users',
  columns: {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    email: { type: 'text', unique: true },
    passwordHash: { type: 'text', name: 'password_hash' },
    firstName: { type: 'text', name: 'first_name' },
    lastName: { type: 'text', name: 'last_name' },
    createdAt: { type: 'timestamptz', name: 'created_at', createDate: true },
  },
});
