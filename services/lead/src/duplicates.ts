import { isDuplicateKeyError } from '@lead-capture/docstore';
import type { Clock } from '@lead-capture/kit';
import type { IdentityClaimDoc, LeadCollections, LeadDoc } from './store.js';

export interface DuplicateVerdict {
  isDuplicate: boolean;
  /** The original lead (never itself a duplicate); null for an original. */
  duplicateOf: string | null;
  /** When the original (the lead itself, for an original) was created. */
  rootCreatedAt: string;
}

type ClaimingLead = Pick<LeadDoc, '_id' | 'createdAt' | 'identityKeys'>;

/** Enough for any real race: each lost insert means another claim appeared, and a lead has two keys. */
const MAX_CLAIM_ROUNDS = 10;

export interface ClaimOptions {
  /**
   * The claims are written in a transaction (`claims` is a transaction's collection): a lost race
   * throws its duplicate key error instead of starting another round, for a store may end the
   * transaction with it (MongoDB does). The caller starts the transaction over: it then reads the
   * winner's claim. Unless the transaction commits, nobody sees the claims it wrote, so no other
   * lead was judged against them meanwhile.
   */
  inTransaction?: boolean;
}

/**
 * Decides whether the lead duplicates an earlier one, safely across replicas. Every normalised
 * e-mail and phone is a claim document whose _id is the key (unique by construction) and which
 * names the original lead of everyone sharing it. Whoever inserts a key's claim first is the
 * original for it; a lead finding claims is a duplicate of the oldest original they name. Two
 * captures of the same e-mail racing on two replicas cannot both insert the claim, so they cannot
 * both end up original. Idempotent: a retry after a crash finds its own claims and decides the same.
 */
export async function claimIdentity(
  { claims }: Pick<LeadCollections, 'claims'>,
  lead: ClaimingLead,
  options: ClaimOptions = {},
): Promise<DuplicateVerdict> {
  const keys = lead.identityKeys;
  if (keys.length === 0) return { isDuplicate: false, duplicateOf: null, rootCreatedAt: lead.createdAt };
  for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
    const existing = await claims.find({ _id: { $in: keys } });
    const root = oldestOriginal(existing.filter((claim) => claim.leadId !== lead._id));
    const rootId = root?.leadId ?? lead._id;
    const rootCreatedAt = root?.rootCreatedAt ?? lead.createdAt;
    // Claims this lead wrote in an earlier round, before it learnt of an older original.
    for (const claim of existing) {
      if (claim.claimedBy === lead._id && claim.leadId !== rootId) {
        await claims.updateOne(
          { _id: claim._id, claimedBy: lead._id },
          { $set: { leadId: rootId, rootCreatedAt } },
        );
      }
    }
    const claimed = new Set(existing.map((claim) => claim._id));
    let lostRace = false;
    for (const key of keys.filter((candidate) => !claimed.has(candidate))) {
      try {
        await claims.insertOne({ _id: key, leadId: rootId, rootCreatedAt, claimedBy: lead._id });
      } catch (error) {
        if (!isDuplicateKeyError(error) || options.inTransaction) throw error;
        lostRace = true;
        break;
      }
    }
    if (!lostRace) {
      return rootId === lead._id
        ? { isDuplicate: false, duplicateOf: null, rootCreatedAt }
        : { isDuplicate: true, duplicateOf: rootId, rootCreatedAt };
    }
  }
  throw new Error(`Could not settle the identity claims of lead ${lead._id}; will retry`);
}

function oldestOriginal(claims: IdentityClaimDoc[]): IdentityClaimDoc | undefined {
  return claims.reduce<IdentityClaimDoc | undefined>((oldest, claim) => {
    if (!oldest) return claim;
    if (claim.rootCreatedAt !== oldest.rootCreatedAt) {
      return claim.rootCreatedAt < oldest.rootCreatedAt ? claim : oldest;
    }
    return claim.leadId < oldest.leadId ? claim : oldest;
  }, undefined);
}

/** Drops the claims of keys no lead but `leavingLeadId` holds any more. */
export async function releaseKeys(
  { leads, claims }: Pick<LeadCollections, 'leads' | 'claims'>,
  leavingLeadId: string,
  keys: readonly string[],
): Promise<void> {
  for (const key of keys) {
    const holder = await leads.findOne(
      { identityKeys: key, _id: { $ne: leavingLeadId } },
      { projection: { _id: 1 } },
    );
    if (!holder) await claims.deleteOne({ _id: key });
  }
}

/**
 * The duplicates of `formerRootId` (an original about to disappear) and the claims naming it now
 * point to `successor`. With no successor given, the oldest of those duplicates becomes the
 * original. Returns the new original's id, or null when the lead had no duplicates.
 */
export async function handOverOriginal(
  { leads, claims }: Pick<LeadCollections, 'leads' | 'claims'>,
  clock: Clock,
  formerRootId: string,
  successor?: Pick<LeadDoc, '_id' | 'createdAt'>,
): Promise<string | null> {
  const heir =
    successor ??
    (await leads.findOne(
      { duplicateOf: formerRootId },
      { sort: { createdAt: 1, _id: 1 }, projection: { _id: 1, createdAt: 1 } },
    ));
  if (!heir) {
    await claims.deleteMany({ leadId: formerRootId });
    return null;
  }
  if (!successor) {
    await leads.updateOne(
      { _id: heir._id },
      { $set: { isDuplicate: false, duplicateOf: null, updatedAt: clock().toISOString() } },
    );
  }
  await leads.updateMany(
    { duplicateOf: formerRootId, _id: { $ne: heir._id } },
    { $set: { duplicateOf: heir._id } },
  );
  await claims.updateMany(
    { leadId: formerRootId },
    { $set: { leadId: heir._id, rootCreatedAt: heir.createdAt } },
  );
  return heir._id;
}
