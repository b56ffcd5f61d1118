/** The part of geoip-country's API this service uses (the package ships no types). */
declare module 'geoip-country' {
  interface CountryLookup {
    /** ISO 3166-1 alpha-2. */
    country: string;
    name: string;
  }
  const geoip: { lookup(ip: string): CountryLookup | null };
  export default geoip;
}
