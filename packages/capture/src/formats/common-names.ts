import type { MappingTarget } from '@lead-capture/contracts';

/** The common names of the standard fields and attribution, in any tool's payload. */
const ALIASES: Record<MappingTarget, readonly string[]> = {
  email: [
    'email',
    'emailaddress',
    'youremail',
    'youremailaddress',
    'whatsyouremail',
    'whatisyouremail',
    'workemail',
    'businessemail',
    'mail',
    'email1',
    'emailaddr',
  ],
  firstName: ['firstname', 'fname', 'givenname', 'first', 'forename', 'namefirst', 'vorname', 'prenom'],
  lastName: ['lastname', 'lname', 'surname', 'familyname', 'last', 'namelast', 'nachname', 'nom'],
  fullName: [
    'name',
    'fullname',
    'yourname',
    'yourfullname',
    'contactname',
    'namefull',
    'whatsyourname',
    'whatisyourname',
  ],
  phone: [
    'phone',
    'phonenumber',
    'mobile',
    'mobilephone',
    'mobilenumber',
    'tel',
    'telephone',
    'cellphone',
    'phone1',
    'yourphone',
    'workphone',
    'businessphone',
    'phonenumberfull',
    'telefon',
  ],
  company: [
    'company',
    'companyname',
    'organization',
    'organisation',
    'business',
    'businessname',
    'yourcompany',
    'firma',
  ],
  utm_source: ['utmsource'],
  utm_medium: ['utmmedium'],
  utm_campaign: ['utmcampaign'],
  utm_term: ['utmterm'],
  utm_content: ['utmcontent'],
  referrer: ['referrer', 'referer', 'httpreferrer', 'httpreferer'],
  landingPage: ['landingpage', 'landingpageurl', 'pageurl', 'pageuri', 'sourceurl'],
  gclid: ['gclid'],
  gbraid: ['gbraid'],
  wbraid: ['wbraid'],
  fbclid: ['fbclid'],
  msclkid: ['msclkid'],
  li_fat_id: ['lifatid'],
  ttclid: ['ttclid'],
  twclid: ['twclid'],
};

const ALIAS_TARGET = new Map<string, MappingTarget>(
  Object.entries(ALIASES).flatMap(([target, names]) => names.map((name) => [name, target as MappingTarget])),
);

/** The target a common name stands for, compared without case, spaces or punctuation. */
export function aliasTarget(name: string): MappingTarget | undefined {
  return ALIAS_TARGET.get(name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, ''));
}

/** Common names of the standard fields and attribution, compared without case, spaces or punctuation. */
export function aliasHints(fields: Record<string, unknown>): Record<string, MappingTarget> {
  const hints: Record<string, MappingTarget> = {};
  const taken = new Set<MappingTarget>();
  for (const name of Object.keys(fields)) {
    const target = aliasTarget(name);
    if (target === undefined || taken.has(target)) continue;
    taken.add(target);
    hints[name] = target;
  }
  return hints;
}
