/** The parts of Meta's Node SDK that tests/integration/meta-node-sdk.test.ts uses: the package ships no types. */
declare module "facebook-nodejs-business-sdk" {
  export class FacebookAdsApi {
    constructor(accessToken: string, locale?: string, crashLog?: boolean);
    /** `path`: Graph path segments, or a whole URL (used as it is). */
    call(method: string, path: string | string[], params?: Record<string, unknown>): Promise<unknown>;
  }
  export class IGMedia {
    id: string;
  }
  export class IGUser {
    constructor(id: string, data?: Record<string, unknown>, parentId?: string | null, api?: FacebookAdsApi);
    /** `pathOverride`: a whole URL to POST to instead of Graph's `/{id}/media`. */
    createMedia(fields: string[], params: Record<string, unknown>, pathOverride?: string | null): Promise<IGMedia>;
    createMediaPublish(
      fields: string[],
      params: Record<string, unknown>,
      pathOverride?: string | null,
    ): Promise<IGMedia>;
  }
  const sdk: { FacebookAdsApi: typeof FacebookAdsApi; IGUser: typeof IGUser; IGMedia: typeof IGMedia };
  export default sdk;
}
