import type { Router } from "express";
import type { AccountsService } from "../accounts/accounts.service";
import { clearTokenCookie, clientAddress, requireAuth, setTokenCookie } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import type { TokenService } from "../accounts/tokens";
import { presentToken, presentUser } from "./accounts.presenters";
import { signInBody, signUpBody } from "./accounts.schemas";

export function accountsRoutes(accounts: AccountsService, tokens: TokenService, secureCookies: boolean): Router {
  const signedIn = requireAuth(tokens, (id) => accounts.userExists(id));
  const routes = documentedRouter("Accounts");

  routes.post("/signup", {
    summary: "Create a password account and sign in",
    body: signUpBody,
    status: 201,
    returns: "A token response; also sets the HttpOnly `access_token` cookie",
    errors: { 409: "An account with this email exists", 429: "Too many sign-ups from this address; see Retry-After" },
    public: true,
  }, async ({ body }, req, res) => {
    const { token } = await accounts.signUp(body.email, body.password, clientAddress(req));
    setTokenCookie(res, token, secureCookies);
    res.status(201).json(presentToken(token));
  });

  routes.post("/signin", {
    summary: "Sign in with email and password",
    body: signInBody,
    returns: "A token response; also sets the HttpOnly `access_token` cookie",
    errors: { 401: "Wrong email or password", 429: "Too many failed sign-ins for this account from this address, or from this address; see Retry-After" },
    public: true,
  }, async ({ body }, req, res) => {
    const { token } = await accounts.signIn(body.email, body.password, clientAddress(req));
    setTokenCookie(res, token, secureCookies);
    res.status(200).json(presentToken(token));
  });

  routes.post("/auth/session", {
    summary: "Exchange an identity provider's session token (as `Authorization: Bearer`) for a Sluice token",
    returns: "The user; sets the HttpOnly `access_token` cookie",
    errors: {
      401: "The identity provider's token is missing, invalid or expired",
      409: "A password account has this email; sign in with email and password",
      503: "No identity provider is configured, or its keys could not be fetched",
    },
    public: true,
  }, async (_input, req, res) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
    const { user, token } = await accounts.exchangeIdentityToken(match?.[1] ?? null);
    setTokenCookie(res, token, secureCookies);
    res.status(200).json(presentUser(user));
  });

  routes.post("/signout", { summary: "Clear the cookie (bearer tokens are not revoked)", returns: "`{signed_out: true}`" }, signedIn, (_input, _req, res) => {
    clearTokenCookie(res, secureCookies);
    res.status(200).json({ signed_out: true });
  });

  return routes.router;
}
