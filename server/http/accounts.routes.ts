import { Router } from "express";
import type { AccountsService } from "../accounts/accounts.service";
import { clearTokenCookie, clientAddress, requireAuth, setTokenCookie } from "./auth.middleware";
import type { TokenService } from "../accounts/tokens";
import { presentToken, presentUser } from "./accounts.presenters";
import { signInBody, signUpBody } from "./accounts.schemas";
import { parse } from "./validate";

export function accountsRoutes(accounts: AccountsService, tokens: TokenService, secureCookies: boolean): Router {
  const signedIn = requireAuth(tokens, (id) => accounts.userExists(id));
  const router = Router();

  router.post("/signup", async (req, res) => {
    const body = parse(signUpBody, req.body, "body");
    const { token } = await accounts.signUp(body.email, body.password, clientAddress(req));
    setTokenCookie(res, token, secureCookies);
    res.status(201).json(presentToken(token));
  });

  router.post("/signin", async (req, res) => {
    const body = parse(signInBody, req.body, "body");
    const { token } = await accounts.signIn(body.email, body.password, clientAddress(req));
    setTokenCookie(res, token, secureCookies);
    res.status(200).json(presentToken(token));
  });

  router.post("/auth/session", async (req, res) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
    const { user, token } = await accounts.exchangeIdentityToken(match?.[1] ?? null);
    setTokenCookie(res, token, secureCookies);
    res.status(200).json(presentUser(user));
  });

  router.post("/signout", signedIn, (_req, res) => {
    clearTokenCookie(res, secureCookies);
    res.status(200).json({ signed_out: true });
  });

  return router;
}
