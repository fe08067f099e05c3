/** Whether the model server answers, for the Models page to say before anyone pulls. */
export interface ModelServerStatus {
  reachable: boolean;
  /** Ollama's version when it answered. */
  version: string | null;
  /** OLLAMA_HOST is this server's own machine (loopback), so "start Ollama on this computer" is the right advice on the desktop. */
  onThisMachine: boolean;
}
