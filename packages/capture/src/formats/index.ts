import type { SourceFormat } from '@lead-capture/contracts';
import { flattenFacebookLead, flattenGoogleAds, flattenLinkedin } from './ad-lead-forms.js';
import { aliasHints } from './common-names.js';
import { FlatFields, type FlatPayload } from './flat-fields.js';
import {
  flattenElfsight,
  flattenFormstack,
  flattenJotform,
  flattenTally,
  flattenTypeform,
} from './form-builders.js';
import { flattenCalendly, flattenHubspotForms, flattenMailchimp } from './marketing-tools.js';
import { objectOf } from './reading.js';
import { flattenElementor, flattenGravityForms, flattenUnbounce, flattenWebflow } from './site-builders.js';

export { type LeadgenRef, leadgenRefsOf } from './ad-lead-forms.js';
export type { FlatPayload } from './flat-fields.js';

/** Formats whose payload may be a top-level JSON array. */
export const ARRAY_PAYLOAD_FORMATS: ReadonlySet<SourceFormat> = new Set(['elfsight']);

type Flattener = (payload: unknown) => FlatPayload;

/**
 * Turns a tool's payload into flat fields named as a person sees them in the tool (question titles,
 * labels, column names), with the targets its own field types or ids say (Typeform's `email` answer,
 * Google's `FULL_NAME` column, ...) and, for every format but `generic`, the common names of the
 * standard fields (`Email Address`, `Phone Number`, `Full Name`, `utm_source`, `gclid`, ...).
 * Secrets a tool puts in its body (Google's `google_key`, Formstack's `HandshakeKey`) are dropped.
 */
export function flattenForFormat(format: Exclude<SourceFormat, 'generic'>, payload: unknown): FlatPayload {
  const flat = FLATTENERS[format](payload);
  for (const [name, target] of Object.entries(aliasHints(flat.fields))) {
    if (!Object.hasOwn(flat.hints, name) && !Object.values(flat.hints).includes(target)) {
      flat.hints[name] = target;
    }
  }
  return flat;
}

const FLATTENERS: Record<Exclude<SourceFormat, 'generic'>, Flattener> = {
  typeform: flattenTypeform,
  'facebook-lead-ads': flattenFacebookLead,
  'google-ads': flattenGoogleAds,
  'hubspot-forms': flattenHubspotForms,
  linkedin: flattenLinkedin,
  calendly: flattenCalendly,
  tally: flattenTally,
  jotform: flattenJotform,
  elementor: flattenElementor,
  'gravity-forms': flattenGravityForms,
  webflow: flattenWebflow,
  unbounce: flattenUnbounce,
  mailchimp: flattenMailchimp,
  zapier: (payload) => FlatFields.of(objectOf(payload)).payload({}),
  elfsight: flattenElfsight,
  formstack: flattenFormstack,
};
