import type { MigrationInterface, QueryRunner } from "typeorm";

/** Ask a collection (issue 23): conversations per user and collection, and their turns; both go with the collection. */
export class Conversations1763800850000 implements MigrationInterface {
  name = "Conversations1763800850000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE conversations (
      id varchar PRIMARY KEY NOT NULL,
      collection_id varchar NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
      user_id varchar NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      title varchar NOT NULL,
      created_at datetime NOT NULL,
      updated_at datetime NOT NULL
    )`);
    await q.query(`CREATE INDEX conversations_by_owner ON conversations (collection_id, user_id, updated_at)`);
    await q.query(`CREATE TABLE conversation_turns (
      id varchar PRIMARY KEY NOT NULL,
      conversation_id varchar NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
      position integer NOT NULL,
      question text NOT NULL,
      standalone_question text NOT NULL,
      answer text NOT NULL,
      model varchar NOT NULL,
      sources text NOT NULL,
      citations text NOT NULL,
      created_at datetime NOT NULL,
      UNIQUE (conversation_id, position)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE conversation_turns`);
    await q.query(`DROP TABLE conversations`);
  }
}
