import type { Router } from "express";
import type { AccountsService } from "../accounts/accounts.service";
import type { Actor } from "../access/actor";
import { actorOf, clearTokenCookie, clientAddress, requireAuth, setTokenCookie } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { bearerToken } from "../routing/bearer-token";
import type { CookieSecurity } from "../routing/transport-security";
import { presentToken, presentUser } from "./accounts.presenters";
import { changePasswordBody, signInBody, signOutQuery, signUpBody, signUpQuery } from "./accounts.schemas";
import type { InvitationsService } from "../accounts/invitations.service";
import type { SignupMode } from "../settings";
import { presentSignupStatus } from "./invitations.presenters";

const HASHING_BUSY = "Too many password checks at once (the hashing threads' queue is full); see Retry-After";

export function accountsRoutes(accounts: AccountsService, authenticate: (token: string) => Promise<Actor>, secureCookies: CookieSecurity, signup: { invitations: InvitationsService; mode: SignupMode }): Router {
  const signedIn = requireAuth(authenticate);
  const routes = documentedRouter("Accounts");

  routes.post("/signup", {
    summary: "Create a password account and sign in",
    body: signUpBody,
    status: 201,
    returns: "A token response; also sets the HttpOnly `access_token` cookie",
    errors: {
      403: "Sign-up is by invitation or closed here, the address is outside SIGNUP_DOMAINS, or an invitation is waiting for it (`detail` says which)",
      404: "The invitation link is not valid",
      409: "An account with this email exists",
      410: "The invitation was used or has expired",
      422: "Invalid fields, or the email is not the invited one",
      429: "Too many sign-ups from this address; see Retry-After",
      503: HASHING_BUSY,
    },
    public: true,
  }, async ({ body }, req, res) => {
    const { token } = await accounts.signUp(body.email, body.password, clientAddress(req), body.invitation ?? null);
    setTokenCookie(res, token, secureCookies);
    res.status(201).json(presentToken(token));
  });

  routes.get("/signup", {
    summary: "How this instance lets people sign up, and the invitation a link names",
    query: signUpQuery,
    returns: "`{signup, first_account, invitation}`: signup is open, invite or off; first_account: nobody has signed up yet; invitation: `{email, expires_at}` of the link's token, or null",
    errors: { 404: "The invitation link is not valid", 410: "The invitation was used or has expired" },
    public: true,
  }, async ({ query }, _req, res) => {
    const invitation = query.invitation ? await signup.invitations.lookup(query.invitation) : null;
    res.json(presentSignupStatus(signup.mode, await signup.invitations.firstAccountPending(), invitation));
  });

  routes.post("/signin", {
    summary: "Sign in with email and password",
    body: signInBody,
    returns: "A token response; also sets the HttpOnly `access_token` cookie",
    errors: {
      401: "Wrong email or password",
      429: "Too many failed sign-ins for this account from this address (an IPv6 address counts by its /64), from this address, or from everyone; see Retry-After",
      503: HASHING_BUSY,
    },
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
    const { user, token } = await accounts.exchangeIdentityToken(bearerToken(req));
    setTokenCookie(res, token, secureCookies);
    res.status(200).json(presentUser(user));
  });

  routes.post("/signout", {
    summary: "Clear the cookie; with `everywhere=true`, also end every session token of the account (API keys stay)",
    query: signOutQuery,
    returns: "`{signed_out: true, everywhere}`",
  }, signedIn, async ({ query }, req, res) => {
    const everywhere = query.everywhere === "true";
    if (everywhere) await accounts.signOutEverywhere(actorOf(res), clientAddress(req));
    clearTokenCookie(res, secureCookies);
    res.status(200).json({ signed_out: true, everywhere });
  });

  routes.put("/users/me/password", {
    summary: "Change the password; every other session is signed out",
    body: changePasswordBody,
    returns: "A new token response for this session; also sets the cookie. Tokens issued before are refused",
    errors: {
      403: "The current password is not right, or the caller used an API key",
      409: "The account signs in with an identity provider and has no password",
      503: HASHING_BUSY,
    },
  }, signedIn, async ({ body }, req, res) => {
    const { token } = await accounts.changePassword(actorOf(res), body.current_password, body.new_password, clientAddress(req));
    setTokenCookie(res, token, secureCookies);
    res.status(200).json(presentToken(token));
  });

  return routes.router;
}
