import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { ownConversationsIn, requireCollectionAccess, requireConversationIn, requireConversationOwner } from "../access/access";
import type { Actor } from "../access/actor";
import type { DocumentPermissions } from "../access/document-permissions";
import { BadRequestError, HttpError, NotFoundError } from "../errors";
import { Conversation } from "../data/entities/conversation.entity";
import { ConversationTurn } from "../data/entities/conversation-turn.entity";
import { ModelRecord } from "../data/entities/model.entity";
import { canonicalModelName, OllamaError, OllamaUnreachableError, type OllamaClient } from "../llm/ollama.client";
import type { Logger } from "../logger";
import { buildGroundedPrompt, citationsIn, NOTHING_FOUND_ANSWER, type EarlierTurn } from "./grounded-prompt";
import type { AskEvent, AskSource } from "./ask-events";
import { retrievePassages, type Passage, type PassageFinder } from "./retrieval";

/** An ask checked and ready to stream: everything that could be a 4xx has been decided. */
export interface PreparedAsk {
  collectionId: string;
  /** The collection's embedding model when the ask was checked: with one, retrieval is hybrid. */
  embeddingModel: string | null;
  question: string;
  model: string;
  topK: number;
  conversation: Conversation | null;
  earlier: EarlierTurn[];
}

/** Used when /api/show names no context length: Ollama's own default. */
const DEFAULT_CONTEXT = 4096;
/** The most context asked of the model server: more costs memory on the user's machine for little gain. */
const MAX_CONTEXT = 16_384;
/** How long a model's context length is remembered, so an ask does not wait on /api/show each time. */
const CONTEXT_CACHE_MS = 5 * 60_000;
const TITLE_LENGTH = 80;

export class AskService {
  private readonly contextLengths = new Map<string, { tokens: number; until: number }>();

  constructor(
    private readonly db: DataSource,
    private readonly retrieval: PassageFinder,
    private readonly permissions: DocumentPermissions,
    private readonly ollama: OllamaClient,
    private readonly logger?: Logger,
  ) {}

  /** Access, model and conversation checks, before any byte of the stream is sent. */
  async prepare(actor: Actor, collectionId: string, input: { question: string; model: string; top_k: number; conversation_id?: string }): Promise<PreparedAsk> {
    const collection = await requireCollectionAccess(this.db.manager, actor, collectionId);
    const model = canonicalModelName(input.model);
    if (!(await this.db.manager.exists(ModelRecord, { where: { modelName: model } }))) {
      throw new BadRequestError(`The model "${input.model}" is not in the catalog; pull it on the Models screen first`);
    }
    let conversation: Conversation | null = null;
    let earlier: EarlierTurn[] = [];
    if (input.conversation_id !== undefined) {
      conversation = await requireConversationIn(this.db.manager, actor, input.conversation_id, collectionId);
      earlier = await this.db.manager.find(ConversationTurn, { where: { conversationId: conversation.id }, order: { position: "ASC" } });
    }
    return { collectionId, embeddingModel: collection.embeddingModel, question: input.question, model, topK: input.top_k, conversation, earlier };
  }

  /**
   * Retrieves, prompts and streams one answer, then records the turn. Every failure ends in one
   * `error` event; an aborted signal (the client left) ends it silently and aborts the model server's request.
   */
  async run(actor: Actor, ask: PreparedAsk, send: (event: AskEvent) => void, signal: AbortSignal): Promise<void> {
    try {
      const standalone = standaloneQuestion(ask.question, ask.earlier);
      const passages = await retrievePassages(this.retrieval, this.permissions, actor, { collectionId: ask.collectionId, embeddingModel: ask.embeddingModel, query: standalone, topK: ask.topK });
      let answer = "";
      let used: Passage[] = [];
      let timings = { eval_count: 0, eval_duration: 0 };
      if (passages.length === 0) {
        send({ status: "sources", sources: [] });
        answer = NOTHING_FOUND_ANSWER;
        send({ status: "answering", delta: answer });
      } else {
        const contextLength = await this.contextLength(ask.model);
        const prompt = buildGroundedPrompt(ask.question, passages, ask.earlier, contextLength);
        used = prompt.used;
        send({ status: "sources", sources: used.map(presentSource) });
        timings = await this.ollama.chat(ask.model, prompt.messages, { num_ctx: contextLength }, (delta) => {
          answer += delta;
          send({ status: "answering", delta });
        }, signal);
      }
      if (signal.aborted) return;
      const citations = citationsIn(answer, used.length);
      const conversationId = await this.record(actor, ask, standalone, answer, used.map(presentSource), citations);
      send({
        status: "completed",
        answer,
        citations,
        conversation_id: conversationId,
        model: ask.model,
        eval_count: timings.eval_count,
        tokens_per_second: timings.eval_duration > 0 ? Math.round((timings.eval_count / (timings.eval_duration / 1e9)) * 100) / 100 : 0,
      });
    } catch (error) {
      if (signal.aborted) return;
      // The model server's own failures are the user's to read; anything else is ours to find in the log.
      if (!(error instanceof OllamaError) && !(error instanceof HttpError)) this.logger?.error(`ask in collection ${ask.collectionId} failed: ${(error as Error).message}`);
      send({ status: "error", detail: failureDetail(error, ask.model) });
    }
  }

  /** The context length to ask the model for: what /api/show says, within [2048, MAX_CONTEXT]. */
  private async contextLength(model: string): Promise<number> {
    const cached = this.contextLengths.get(model);
    if (cached && cached.until > Date.now()) return cached.tokens;
    const reported = await this.ollama.contextLength(model);
    const tokens = Math.min(MAX_CONTEXT, reported ?? DEFAULT_CONTEXT);
    this.contextLengths.set(model, { tokens, until: Date.now() + CONTEXT_CACHE_MS });
    return tokens;
  }

  /** Adds the turn, starting the conversation on its first; answers the conversation's id. */
  private async record(actor: Actor, ask: PreparedAsk, standalone: string, answer: string, sources: AskSource[], citations: number[]): Promise<string> {
    return this.db.transaction(async (tx) => {
      const now = new Date();
      let conversationId = ask.conversation?.id;
      if (!conversationId) {
        conversationId = crypto.randomUUID();
        const title = ask.question.length > TITLE_LENGTH ? `${ask.question.slice(0, TITLE_LENGTH - 1)}…` : ask.question;
        await tx.insert(Conversation, { id: conversationId, collectionId: ask.collectionId, userId: actor.userId, title, createdAt: now, updatedAt: now });
      } else {
        const updated = await tx.update(Conversation, { id: conversationId }, { updatedAt: now });
        if (!updated.affected) throw new NotFoundError("The conversation was deleted while the answer was written");
      }
      const position = await tx.count(ConversationTurn, { where: { conversationId } });
      await tx.insert(ConversationTurn, {
        id: crypto.randomUUID(),
        conversationId,
        position,
        question: ask.question,
        standaloneQuestion: standalone,
        answer,
        model: ask.model,
        sources: JSON.stringify(sources),
        citations: JSON.stringify(citations),
        createdAt: now,
      });
      return conversationId;
    });
  }

  // ---- conversations ----

  async listConversations(actor: Actor, collectionId: string): Promise<Conversation[]> {
    return ownConversationsIn(this.db.manager, actor, collectionId);
  }

  async conversation(actor: Actor, conversationId: string): Promise<{ conversation: Conversation; turns: ConversationTurn[] }> {
    const conversation = await requireConversationOwner(this.db.manager, actor, conversationId);
    const turns = await this.db.manager.find(ConversationTurn, { where: { conversationId }, order: { position: "ASC" } });
    return { conversation, turns };
  }

  async deleteConversation(actor: Actor, conversationId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await requireConversationOwner(tx, actor, conversationId);
      await tx.delete(Conversation, { id: conversationId });
    });
  }
}

/**
 * What retrieval searches for. A follow-up ("and the second one?") rarely names its subject,
 * so the previous question is searched with it: cheap and without a model call
 * (docs/decisions/0137-ask-standalone-question.md).
 */
export function standaloneQuestion(question: string, earlier: EarlierTurn[]): string {
  const previous = earlier.at(-1);
  return previous ? `${previous.question} ${question}` : question;
}

function presentSource(passage: Passage, i: number): AskSource {
  return {
    n: i + 1,
    document_id: passage.documentId,
    title: passage.title,
    path: passage.path,
    snippet: passage.snippet,
    score: passage.score,
    page: passage.page,
    location_label: passage.locationLabel,
    from_scan: passage.scanned,
  };
}

/** A sentence a user understands for each way an answer can fail. */
function failureDetail(error: unknown, model: string): string {
  if (error instanceof OllamaUnreachableError) return error.message;
  if (error instanceof OllamaError) {
    if (/not found|try pulling/i.test(error.message)) return `The model "${model}" is not on the model server; pull it again on the Models screen`;
    if (/stopped in the middle|interrupted/i.test(error.message)) return "The model server stopped in the middle of the answer; ask again";
    return `The model server could not answer: ${error.message}`;
  }
  if (error instanceof HttpError) return error.message;
  return "The answer could not be completed because of an unexpected error; ask again";
}
