import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import * as api from "../api";
import { client, invalidate, keys, queries, queryClient } from "../api";
import { announce, ConfirmButton, Empty, ErrorText, Loading, usePageHeading } from "../components";
import { formatPlace, formatTime, formatWhere } from "../format";
import { writesText } from "../model-capabilities";
import { href } from "../navigation";
import { PermissionNotice } from "./PermissionNotice";

/** One question and its answer as shown: a finished turn, or the one being written. */
interface ShownTurn {
  question: string;
  answer: string;
  sources: api.AskSource[];
  citations: number[];
  error?: string;
}

/**
 * The Ask view of one collection: pick a catalog model, ask, watch the answer stream in, open
 * the cited passages; conversations on the side. The answer region is a live region kept busy
 * while tokens arrive, so a screen reader reads the answer once it is complete, not every token.
 */
export function AskPage({ collectionId }: { collectionId: string }) {
  const collections = useQuery(queries.collections());
  const collection = collections.data?.find((c) => c.id === collectionId);
  const heading = usePageHeading(collection ? `Ask ${collection.name}` : "Ask");
  const models = useQuery(queries.models());
  const server = useQuery(queries.modelServer());
  const conversations = useQuery(queries.conversations(collectionId));
  const [model, setModel] = useState("");
  const [question, setQuestion] = useState("");
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [turns, setTurns] = useState<ShownTurn[]>([]);
  const [streaming, setStreaming] = useState(false);
  const [openSource, setOpenSource] = useState<{ turn: number; n: number } | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);

  // Embedding-only models cannot answer: they are not offered here.
  const chatModels = (models.data ?? []).filter(writesText);
  const firstChatModel = chatModels[0]?.model_name;
  useEffect(() => {
    if (!model && firstChatModel) setModel(firstChatModel);
  }, [firstChatModel, model]);
  useEffect(() => () => abort.current?.abort(), []);

  const updateLast = (change: (turn: ShownTurn) => ShownTurn) => setTurns((all) => [...all.slice(0, -1), change(all[all.length - 1])]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const asked = question.trim();
    if (!asked || !model || streaming) return;
    setFailure(null);
    setOpenSource(null);
    setTurns((all) => [...all, { question: asked, answer: "", sources: [], citations: [] }]);
    setQuestion("");
    setStreaming(true);
    const controller = new AbortController();
    abort.current = controller;
    try {
      await api.askCollection(
        collectionId,
        { question: asked, model, ...(conversationId ? { conversation_id: conversationId } : {}) },
        (e) => {
          if (e.status === "sources") updateLast((t) => ({ ...t, sources: e.sources }));
          else if (e.status === "answering") updateLast((t) => ({ ...t, answer: t.answer + e.delta }));
          else if (e.status === "completed") {
            updateLast((t) => ({ ...t, answer: e.answer, citations: e.citations }));
            setConversationId(e.conversation_id);
            announce("Answer complete");
          } else if (e.status === "error") {
            updateLast((t) => ({ ...t, error: e.detail }));
            announce(e.detail);
          }
        },
        controller.signal,
      );
      void invalidate(keys.conversations(collectionId));
    } catch (error) {
      if (controller.signal.aborted) {
        updateLast((t) => ({ ...t, error: "Stopped." }));
        announce("Answer stopped");
      } else {
        setTurns((all) => all.slice(0, -1));
        setQuestion(asked);
        setFailure(error);
      }
    } finally {
      setStreaming(false);
      abort.current = null;
    }
  }

  async function open(id: string) {
    abort.current?.abort();
    setFailure(null);
    setOpenSource(null);
    try {
      const found = await queryClient.fetchQuery({
        queryKey: ["conversation", id],
        queryFn: () => api.answer(client.GET("/conversations/{id}", { params: { path: { id } } })),
        staleTime: 0,
      });
      setConversationId(id);
      setTurns(found.turns.map((t) => ({ question: t.question, answer: t.answer, sources: t.sources as api.AskSource[], citations: t.citations })));
      announce(`Opened conversation “${found.title}”`);
    } catch (error) {
      setFailure(error);
    }
  }

  function startNew() {
    abort.current?.abort();
    setConversationId(null);
    setTurns([]);
    setOpenSource(null);
    announce("New conversation");
  }

  async function remove(id: string) {
    try {
      await client.DELETE("/conversations/{id}", { params: { path: { id } } });
      if (id === conversationId) startNew();
      announce("Conversation deleted");
      void invalidate(keys.conversations(collectionId));
    } catch (error) {
      setFailure(error);
    }
  }

  const noModel = models.data !== undefined && chatModels.length === 0;
  const onlyEmbedding = noModel && (models.data?.length ?? 0) > 0;
  const serverDown = server.data?.reachable === false;
  const shownSource = openSource ? turns[openSource.turn]?.sources.find((s) => s.n === openSource.n) : undefined;

  return (
    <div className="page">
      <p>
        <a href={href("collections", collectionId)}>← {collection?.name ?? "Collection"}</a>
      </p>
      <h1 ref={heading} tabIndex={-1}>
        {collection ? `Ask ${collection.name}` : "Ask"}
      </h1>
      {collections.data && !collection && <Empty>This collection does not exist or you do not have access to it.</Empty>}
      {collection && <PermissionNotice collection={collection} />}
      <ErrorText error={models.error ?? conversations.error} />
      {models.isPending ? <Loading label="Loading models…" /> : null}
      {noModel && (
        <p className="notice" data-testid="no-model">
          {onlyEmbedding ? "The catalog holds only embedding models, which cannot write answers." : "No model is pulled yet."}{" "}
          <a href={href("models")}>Pull a chat model on the Models screen</a> (for example llama3.2), then come back to ask.
        </p>
      )}
      {serverDown && (
        <p className="error" role="alert" data-testid="model-server-down">
          The model server cannot be reached, so no answer can be written now. Check that Ollama is running (OLLAMA_HOST).
        </p>
      )}
      <div className="ask-layout">
        <section className="card ask-main" aria-labelledby="answer-heading">
          <h2 id="answer-heading">{conversationId ? "Conversation" : "New conversation"}</h2>
          <div className="ask-answer" aria-live="polite" aria-busy={streaming} data-testid="answer-region">
            {turns.length === 0 && <Empty>Ask a question; the answer cites the collection's passages as [1], [2]…</Empty>}
            {turns.map((turn, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: turns are only ever appended; the position is the turn's identity
              <article key={i} className="ask-turn" aria-label={`Question ${i + 1}`}>
                <p className="ask-question">
                  <span className="sr-only">You asked: </span>
                  {turn.question}
                </p>
                <p className="ask-text">
                  <span className="sr-only">Answer: </span>
                  <AnswerText turn={turn} onCite={(n) => setOpenSource({ turn: i, n })} />
                </p>
                {turn.error && <p className="error">{turn.error}</p>}
              </article>
            ))}
          </div>
          {shownSource && (
            <aside className="ask-source card" aria-label={`Source ${shownSource.n}`} data-testid="cited-source">
              <div className="row-between">
                <strong>
                  [{shownSource.n}] {shownSource.title || shownSource.path}
                  {formatPlace(shownSource) && <span className="muted small"> ({formatPlace(shownSource)})</span>}
                </strong>
                <button type="button" onClick={() => setOpenSource(null)}>
                  Close source
                </button>
              </div>
              <div className="result-path">
                <span className="sr-only">Source path: </span>
                {shownSource.path}
              </div>
              {/* The server HTML-escapes the text and only adds <mark> around matches. */}
              {/* biome-ignore lint/security/noDangerouslySetInnerHtml: server-escaped snippet whose only markup is <mark> */}
              <p className="snippet" dangerouslySetInnerHTML={{ __html: shownSource.snippet }} />
            </aside>
          )}
          <form onSubmit={submit} aria-label="Ask a question" noValidate>
            <div className="field">
              <label htmlFor="ask-model">Model</label>
              <select id="ask-model" value={model} onChange={(e) => setModel(e.target.value)} disabled={noModel || streaming}>
                {chatModels.map((m) => (
                  <option key={m.id} value={m.model_name}>
                    {m.model_name} · {m.tokens_per_second.toFixed(1)} tokens/s
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor="ask-question">Question</label>
              <textarea
                id="ask-question"
                rows={3}
                value={question}
                onChange={(e) => setQuestion(e.target.value)}
                onKeyDown={(e) => {
                  // Enter asks, Shift+Enter is a new line, as in chat boxes.
                  if (e.key === "Enter" && !e.shiftKey) void submit(e);
                }}
                disabled={noModel}
              />
            </div>
            <ErrorText error={failure} />
            <div className="actions">
              <button type="submit" className="primary" disabled={noModel || streaming || !question.trim() || !model}>
                {streaming ? "Answering…" : "Ask"}
              </button>
              {streaming && (
                <button type="button" onClick={() => abort.current?.abort()}>
                  Stop
                </button>
              )}
            </div>
          </form>
        </section>
        <section className="card ask-side" aria-labelledby="conversations-heading">
          <div className="row-between">
            <h2 id="conversations-heading">Conversations</h2>
            <button type="button" onClick={startNew} disabled={streaming}>
              New conversation
            </button>
          </div>
          {conversations.data && conversations.data.length === 0 && <Empty>No conversations yet.</Empty>}
          <ul className="plain">
            {(conversations.data ?? []).map((c) => (
              <li key={c.id} className="row row-between">
                <div>
                  <button type="button" className="link" aria-current={c.id === conversationId ? "true" : undefined} onClick={() => void open(c.id)}>
                    {c.title}
                  </button>
                  <div className="muted small">{formatTime(c.updated_at)}</div>
                </div>
                <ConfirmButton label="Delete" question={`Delete the conversation “${c.title}”?`} onConfirm={() => void remove(c.id)} />
              </li>
            ))}
          </ul>
        </section>
      </div>
    </div>
  );
}

/** The answer's text with each [n] of a listed source as a button that opens that passage. */
function AnswerText({ turn, onCite }: { turn: ShownTurn; onCite: (n: number) => void }) {
  const parts = turn.answer.split(/(\[\d+\])/g);
  return (
    <>
      {parts.map((part, i) => {
        const match = /^\[(\d+)\]$/.exec(part);
        const source = match ? turn.sources.find((s) => s.n === Number(match[1])) : undefined;
        // The parts of one answer's text never reorder: the position is each part's identity.
        // biome-ignore lint/suspicious/noArrayIndexKey: see above
        if (!source) return <span key={i}>{part}</span>;
        const where = formatWhere(source);
        // The name holds the marker's own words in their order ("1, p. 3"), so a person who says what they see can press it (WCAG 2.5.3).
        const name = `Source ${source.n}${where ? `, ${where}` : ""}: ${source.title || source.path}${source.from_scan ? ", from a scan" : ""}`;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: the same marker can appear twice in an answer
          <button key={i} type="button" className="citation" aria-label={name} onClick={() => onCite(source.n)}>
            [{source.n}
            {where ? `, ${where}` : ""}]
          </button>
        );
      })}
    </>
  );
}
