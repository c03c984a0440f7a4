import Joi from 'joi';

export const email = Joi.string().trim().lowercase().email({ tlds: false }).max(254);
/** Passwords: 8..128 characters; anything beyond that only feeds a denial of service. */
export const password = Joi.string().min(8).max(128);
export const opaqueToken = Joi.string().trim().min(16).max(512);

export const loginBody = Joi.object({ email: email.required(), password: Joi.string().max(128).required() });
export const refreshBody = Joi.object({ refreshToken: opaqueToken.required() });
export const magicLinkBody = Joi.object({ email: email.required() });
export const tokenBody = Joi.object({ token: opaqueToken.required() });
