/**
 * The credential patterns redaction masks in any text (./credential.ts finds where to search
 * for them; browser bundles search whole texts, ./credential.browser.ts).
 */

// `Bearer x`, `Basic x`, SigV4 credentials and signatures, and key formats of the providers
// tapedeck records (OpenAI `sk-`, `sk-proj-`, realtime ephemeral `ek_`, Gemini Live's `auth_tokens/`, Anthropic `sk-ant-`, OpenRouter `sk-or-`, Google
// `AIza`, Groq `gsk_`, Hugging Face `hf_`, Replicate `r8_`, Perplexity `pplx-`, xAI `xai-`,
// GitHub, Slack, AWS access key ids), the well-known formats of other services that reach prompts
// and tool results (Google OAuth `ya29.`, GitHub fine-grained `github_pat_`, Stripe `sk_live_`,
// `rk_live_`, `sk_test_`, GitLab `glpat-`, npm `npm_`, the secret path of Slack and Discord webhook
// URLs), and JSON Web Tokens under any name or none: a header and
// a payload that are base64url JSON objects (`eyJ`, the encoding of `{"`) and a signature, the
// bearer tokens of Firebase, Supabase, Azure AD and most OAuth servers (base64 JSON without the
// dots, as in a Bedrock stream's chunks, is no JWT). A token must be long enough that ordinary
// prose ("sk-learn", "Bearer of bad news") is left alone, and a `Bearer`/`Basic`/`Token` token
// must look random (a digit, one of `._~+=`, a capital after a small letter, or 24 letters in a
// row, longer than words run): a capitalized
// word before a long word ("Basic internationalization", "Token classification-and-tagging",
// "Bearer bonds/securities-instruments") was masked in answers, and replay served the masks
// instead of what the model said. Keep credential.ts's TOKEN_CHARS and
// TOKEN_RUN in step: every alternative's last part is a run of at least TOKEN_RUN characters,
// all of TOKEN_CHARS. Node's search adds a Telegram bot token to the group that opens with
// `\b(?:sk-` (credential.ts, which finds it by that text).
export const CREDENTIAL =
  /\b(?:Bearer|Basic|Token)\s+(?=[A-Za-z0-9/-]*(?:[0-9._~+=]|[a-z][A-Z])|[A-Za-z]{24})[A-Za-z0-9._~+/=-]{16,}|\b(?:Credential=[A-Za-z0-9/_-]{16,}|Signature=[0-9a-f]{64})|\bauth_tokens\/[A-Za-z0-9_-]{16,}|\b(?:sk-(?:ant-|proj-|or-)?[A-Za-z0-9_-]{20,}|ek_[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|gsk_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{30,}|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{30,}|xai-[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}|ya29\.[A-Za-z0-9_-]{30,}|[rs]k_(?:live|test)_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])|hooks\.slack\.com\/services\/T[A-Z0-9]{6,}\/B[A-Z0-9]{6,}\/[A-Za-z0-9]{20,}|discord(?:app)?\.com\/api\/webhooks\/[0-9]{17,20}\/[A-Za-z0-9_-]{60,}|xox[abposr]-[A-Za-z0-9-]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{16,})/g;
