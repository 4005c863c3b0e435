import { NextResponse, type NextRequest } from "next/server";
import { REQUESTED_PATH_HEADER } from "./app/safe-next";

/** Tells the dashboard's layout which page was asked for, so a signed-out visitor returns to it after signing in. */
export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  headers.set(REQUESTED_PATH_HEADER, request.nextUrl.pathname + request.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

export const config = { matcher: "/dashboard/:path*" };
