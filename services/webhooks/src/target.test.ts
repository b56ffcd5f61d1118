import { describe, expect, it } from 'vitest';
import { addressRefusal, urlProblem } from './target.js';

const strict = { allowHttp: false, allowPrivate: false };

describe('addressRefusal', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    // IPv4 in the deprecated IPv4-compatible form (::/96): 127.0.0.1, 169.254.169.254, 10.0.0.1.
    ['::7f00:1', 'IPv4-compatible'],
    ['::a9fe:a9fe', 'IPv4-compatible'],
    ['::10.0.0.1', 'IPv4-compatible'],
    ['::8.8.8.8', 'IPv4-compatible'],
    ['::', 'unspecified'],
    ['::ffff:0:7f00:1', 'rfc6145'],
    // NAT64: judged by the IPv4 inside; its local-use prefix is refused.
    ['64:ff9b::a9fe:a9fe', 'linkLocal IPv4 (169.254.169.254)'],
    ['64:ff9b::7f00:1', 'loopback IPv4 (127.0.0.1)'],
    ['64:ff9b::c0a8:101', 'private IPv4 (192.168.1.1)'],
    ['64:ff9b:1::808:808', 'rfc6052'],
    // 6to4 and Teredo wrap IPv4 too (and are deprecated): refused whatever they wrap.
    ['2002:7f00:1::1', '6to4'],
    ['2002:c0a8:101::1', '6to4'],
    ['2002:808:808::1', '6to4'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    ['100::1', 'discard'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['2001:2::1', 'benchmarking'],
    ['2001:20::1', 'orchid2'],
    ['5f00::1', 'segmentRouting'],
    ['4000::1', 'outside 2000::/3'],
    ['fc00::1', 'uniqueLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['192.0.0.8', 'reserved'],
  ])('refuses %s (%s)', (address, range) => {
    expect(addressRefusal(address, strict)).toContain(range);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '64:ff9b::808:808', '2a00:1450:4001::1'])(
    'lets the public address %s through',
    (address) => {
      expect(addressRefusal(address, strict)).toBeUndefined();
    },
  );

  it('lets everything through when private targets are allowed', () => {
    expect(addressRefusal('127.0.0.1', { allowPrivate: true })).toBeUndefined();
  });
});

describe('urlProblem', () => {
  it('takes an https URL with a host name', () => {
    expect(urlProblem('https://hooks.example.com/leads?team=1', strict)).toBeUndefined();
  });

  it.each([
    ['http://hooks.example.com/', /https/],
    ['ftp://hooks.example.com/', /https/],
    ['https://[::1]/x', /loopback/],
    ['https://[::7f00:1]/x', /IPv4-compatible/],
    ['https://[::ffff:7f00:1]/x', /loopback/],
    ['https://[64:ff9b::a9fe:a9fe]/latest/meta-data', /linkLocal/],
    ['https://0x7f000001/x', /loopback/],
    ['https://a:b@hooks.example.com/', /credentials/],
    ['https://hooks.example.com/#x', /fragment/],
    [`https://hooks.example.com/${'a'.repeat(2100)}`, /2048/],
  ])('refuses %s', (url, problem) => {
    expect(urlProblem(url, strict)).toMatch(problem);
  });

  it('takes http when allowed', () => {
    expect(urlProblem('http://hooks.example.com/', { ...strict, allowHttp: true })).toBeUndefined();
  });
});
