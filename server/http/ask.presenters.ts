import type { Conversation } from "../data/entities/conversation.entity";
import type { ConversationTurn } from "../data/entities/conversation-turn.entity";
import { isoNoZone } from "../time";

export function presentConversation(conversation: Conversation) {
  return {
    id: conversation.id,
    collection_id: conversation.collectionId,
    title: conversation.title,
    created_at: isoNoZone(conversation.createdAt),
    updated_at: isoNoZone(conversation.updatedAt),
  };
}

function presentTurn(turn: ConversationTurn) {
  return {
    question: turn.question,
    answer: turn.answer,
    model: turn.model,
    sources: JSON.parse(turn.sources) as unknown[],
    citations: JSON.parse(turn.citations) as number[],
    created_at: isoNoZone(turn.createdAt),
  };
}

export function presentConversationWithTurns(conversation: Conversation, turns: ConversationTurn[]) {
  return { ...presentConversation(conversation), turns: turns.map(presentTurn) };
}
