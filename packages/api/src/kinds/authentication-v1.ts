/**
 * authentication.k8s.io/v1: TokenReview, TokenRequest (the `token` subresource
 * of service accounts) and SelfSubjectReview, as upstream Kubernetes 1.32
 * (`k8s.io/api/authentication/v1`).
 */
import { Type } from '@sinclair/typebox';
import { boolean, described, int64, list, map, object, string, time, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';

const N = 'io.k8s.api.authentication.v1.';

export const UserInfo = object(N + 'UserInfo', 'UserInfo holds the information about the user needed to implement the user.Info interface.', {
  username: string('The name that uniquely identifies this user among all active users.'),
  uid: string('A unique value that identifies this user across time.'),
  groups: list(Type.String(), 'The names of groups this user is a part of.', { listType: 'atomic' }),
  extra: map(Type.Array(Type.String()), 'Any additional information provided by the authenticator.'),
});

// ---------------------------------------------------------------- TokenReview

export const TokenReviewSpec = object(N + 'TokenReviewSpec', 'TokenReviewSpec is a description of the token authentication request.', {
  token: string('Token is the opaque bearer token.'),
  audiences: list(Type.String(), 'Audiences is a list of the identifiers that the resource server presented with the token identifies as.', {
    listType: 'atomic',
  }),
});

export const TokenReviewStatus = object(N + 'TokenReviewStatus', 'TokenReviewStatus is the result of the token authentication request.', {
  authenticated: boolean('Authenticated indicates that the token was associated with a known user.'),
  user: described(UserInfo, 'User is the UserInfo associated with the provided token.'),
  audiences: list(Type.String(), 'Audiences are audience identifiers chosen by the authenticator that are compatible with both the TokenReview and token.', {
    listType: 'atomic',
  }),
  error: string("Error indicates that the token couldn't be checked."),
});

export const TokenReview = kindOf(N + 'TokenReview', 'TokenReview attempts to authenticate a token to a known user.', {
  spec: described(TokenReviewSpec, 'Spec holds information about the request being evaluated.'),
  status: described(TokenReviewStatus, 'Status is filled in by the server and indicates whether the request can be authenticated.'),
});

// ---------------------------------------------------------------- TokenRequest

export const BoundObjectReference = object(N + 'BoundObjectReference', 'BoundObjectReference is a reference to an object that a token is bound to.', {
  kind: string("Kind of the referent. Valid kinds are 'Pod' and 'Secret'."),
  apiVersion: string('API version of the referent.'),
  name: string('Name of the referent.'),
  uid: string('UID of the referent.'),
});

export const TokenRequestSpec = object(
  N + 'TokenRequestSpec',
  'TokenRequestSpec contains client provided parameters of a token request.',
  {
    audiences: list(Type.String(), 'Audiences are the intended audiences of the token.', { listType: 'atomic' }),
    expirationSeconds: int64('ExpirationSeconds is the requested duration of validity of the request.'),
    boundObjectRef: described(
      BoundObjectReference,
      'BoundObjectRef is a reference to an object that the token will be bound to; the token is only valid for as long as the object exists.',
    ),
  },
  ['audiences'],
);

export const TokenRequestStatus = object(
  N + 'TokenRequestStatus',
  'TokenRequestStatus is the result of a token request.',
  {
    token: string('Token is the opaque bearer token.'),
    expirationTimestamp: time('ExpirationTimestamp is the time of expiration of the returned token.'),
  },
  ['token', 'expirationTimestamp'],
);

export const TokenRequest = kindOf(N + 'TokenRequest', 'TokenRequest requests a token for a given service account.', {
  spec: described(TokenRequestSpec, 'Spec holds information about the request being evaluated.'),
  status: described(TokenRequestStatus, 'Status is filled in by the server and indicates whether the token can be authenticated.'),
});

// ---------------------------------------------------------------- SelfSubjectReview

export const SelfSubjectReviewStatus = object(
  N + 'SelfSubjectReviewStatus',
  'SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user.',
  {
    userInfo: described(UserInfo, 'User attributes of the user making this request.'),
  },
);

export const SelfSubjectReview = kindOf(
  N + 'SelfSubjectReview',
  'SelfSubjectReview contains the user information that the kube-apiserver has about the user making this request.',
  {
    status: described(SelfSubjectReviewStatus, 'Status is filled in by the server with the user attributes.'),
  },
);

export type UserInfo = Static<typeof UserInfo>;
export type TokenReviewSpec = Static<typeof TokenReviewSpec>;
export type TokenReviewStatus = Static<typeof TokenReviewStatus>;
export type TokenReview = Static<typeof TokenReview>;
export type BoundObjectReference = Static<typeof BoundObjectReference>;
export type TokenRequestSpec = Static<typeof TokenRequestSpec>;
export type TokenRequestStatus = Static<typeof TokenRequestStatus>;
export type TokenRequest = Static<typeof TokenRequest>;
export type SelfSubjectReviewStatus = Static<typeof SelfSubjectReviewStatus>;
export type SelfSubjectReview = Static<typeof SelfSubjectReview>;
